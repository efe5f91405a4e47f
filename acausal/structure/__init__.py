"""The structural compiler's stages: aliases, matching, index reduction, BLT, causalization."""
