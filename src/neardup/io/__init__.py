"""neardup.io"""
