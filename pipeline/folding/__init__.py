"""Stage 3, folding: sightings repaired, named, keyed into rulings; translations linked.

Imports the foundation, text and reading; nothing from a later stage.
"""
