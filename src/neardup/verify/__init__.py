"""neardup.verify"""
