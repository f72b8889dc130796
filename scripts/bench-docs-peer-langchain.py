#!/usr/bin/env python3
"""The LangChain peer of `ground index`, timed by scripts/bench-docs-vs-langchain.py.

    PYTHON scripts/bench-docs-peer-langchain.py index CORPUS OUT.pkl
    PYTHON scripts/bench-docs-peer-langchain.py query OUT.pkl QUERY [-n 5]

Run with the benchmark's venv (langchain-community, rank-bm25; versions pinned in
scripts/bench-docs-vs-langchain.requirements.txt).

index: DirectoryLoader (every file under CORPUS, read by TextLoader as UTF-8; the
default loader would need `unstructured`) and BM25Retriever.from_documents (rank_bm25's
BM25Okapi, LangChain's default whitespace tokenizer), then the retriever pickled to
OUT.pkl so that a later process can query it, which is what `ground index add` gives.
Whole files are the documents: no text splitter, which spares the peer the splitting
work that ground's passages cost it.

query: a new process loads the pickle and asks one query; prints the top sources.
"""
import argparse
import pickle
import sys


def index(corpus, out):
    from langchain_community.document_loaders import DirectoryLoader, TextLoader
    from langchain_community.retrievers import BM25Retriever

    loader = DirectoryLoader(corpus, glob="**/*", loader_cls=TextLoader, loader_kwargs={"encoding": "utf-8"}, silent_errors=False)
    docs = loader.load()
    retriever = BM25Retriever.from_documents(docs, k=5)
    with open(out, "wb") as f:
        pickle.dump(retriever, f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"indexed {len(docs)} documents")


def query(path, q, n):
    with open(path, "rb") as f:
        retriever = pickle.load(f)
    retriever.k = n
    for d in retriever.invoke(q):
        print(d.metadata.get("source"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("index")
    a.add_argument("corpus")
    a.add_argument("out")
    b = sub.add_parser("query")
    b.add_argument("pickle")
    b.add_argument("query")
    b.add_argument("-n", type=int, default=5)
    args = ap.parse_args()
    if args.cmd == "index":
        index(args.corpus, args.out)
    else:
        query(args.pickle, args.query, args.n)


if __name__ == "__main__":
    sys.exit(main())
