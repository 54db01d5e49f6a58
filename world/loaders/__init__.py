"""One loader per on-disk format, each returning the canonical `world.data.Dataset` and raising
`DataFormatError` naming file, line and problem. May import: `world`.
"""
