"""Stage 4, storage: the dataset folder, versions, segments, parts, commits, migrations.

Imports the foundation and the stages before it; nothing from diffing or publishing.
"""
