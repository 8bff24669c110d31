"""neardup.report"""
