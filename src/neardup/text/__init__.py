"""neardup.text"""
