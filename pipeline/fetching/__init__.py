"""Stage 0, fetching: the latest public files downloaded into raw/, verified, with their state.

Imports only the foundation modules at the top of pipeline/; nothing from a later stage.
"""
