"""The whole export, read beside the envelope: what the envelope leaves out, read from the export itself."""
