"""neardup.train"""
