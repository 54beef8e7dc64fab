"""kernel_svm"""
