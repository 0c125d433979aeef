"""Answering: turning retrieved evidence into answers, including the restricted program evaluator."""
