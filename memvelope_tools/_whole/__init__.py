"""The whole export, read beside the envelope: every file of the download, the uploaded and generated
files the conversations point to, the projects and custom GPTs they use, the memories ChatGPT cited."""
