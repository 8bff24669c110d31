"""neardup.eval"""
