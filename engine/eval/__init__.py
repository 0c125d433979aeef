"""Evaluation metrics: retrieval recall/precision, ranking metrics and numeric answer matching."""
