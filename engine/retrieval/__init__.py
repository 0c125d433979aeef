"""Retrieval: lexical (BM25), dense (HNSW), fusion (RRF), reranking, document and passage retrievers."""
