"""The whole export, read beside the envelope: what the envelope leaves out, read from the export itself
(every message node on every branch, every file of the download, the uploaded and generated files the
conversations point to, the projects and custom GPTs they use, the memories ChatGPT cited)."""
