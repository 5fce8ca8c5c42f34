"""Stage 2, reading: raw files found, decoded and parsed by layout (parsers/) into sightings.

Imports the foundation and text; nothing from a later stage.
"""
