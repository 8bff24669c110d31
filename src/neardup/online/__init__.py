"""neardup.online"""
