"""Stage 2, reading: raw files found, opened, parsed by layout (parsers/) into sightings.

A file is opened as it is stored (compressed, or a zip of members: documents.py); the
stages after reading see documents. Imports the foundation and text; nothing later.
"""
