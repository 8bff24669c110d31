"""neardup.distributed"""
