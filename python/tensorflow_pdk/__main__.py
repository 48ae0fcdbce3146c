"""``python -m tensorflow_pdk``: diagnostics (tensorflow_pdk/diagnostics.py)."""
import sys

from tensorflow_pdk.diagnostics import main

sys.exit(main())
