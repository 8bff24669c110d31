"""neardup.candidates"""
