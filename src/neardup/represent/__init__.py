"""neardup.represent"""
