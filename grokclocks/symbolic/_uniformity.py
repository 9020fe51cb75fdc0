"""stub"""
FORMULAS = ()
