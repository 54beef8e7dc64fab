"""linear_svm"""
