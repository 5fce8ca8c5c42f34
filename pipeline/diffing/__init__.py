"""Stage 5, diffing: each (card, source) snapshot against the last stored; a card's history.

Imports the foundation and the stages before it; nothing from publishing.
"""
