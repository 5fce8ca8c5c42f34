"""Stage 1, text: cleaning and hashing ruling text, printed dates, languages.

Pure functions of one value; imports only the foundation modules at the top of pipeline/.
"""
