"""Imported first by ``app.py`` and by every page: the app's heavy libraries, once, in order.

Streamlit runs each session's script in a thread of one server process. When a class opens a
freshly started server at the same moment, several threads would import pandas, plotly, scipy,
gymnasium and torch concurrently, and Python resolves the lock cycles inside those packages by
handing some threads half-initialised modules ("partially initialized module 'pandas' has no
attribute 'Series'"). Importing this module first makes the first thread load them all while
the others wait on this module's own import lock, holding nothing; afterwards it costs nothing.
The first visitor of a new server pays for the imports (about two seconds, torch being most of
it); nobody else does.

Afterwards everything loaded so far is moved out of the garbage collector's sight
(``gc.freeze``): those objects live as long as the process, and without this every full
collection would walk all of them again, holding the interpreter lock for every session. The
collector's first threshold is raised too (below).
"""

import gc

import gymnasium  # noqa: F401
import numpy  # noqa: F401
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401
import plotly.io  # noqa: F401
import plotly.subplots  # noqa: F401
import scipy.sparse.csgraph  # noqa: F401
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401
import torch  # noqa: F401

gc.freeze()
# A young collection every 7000 new container objects instead of every 700: a rerun makes and
# drops tens of thousands (figure dicts, messages, widget states), most of them freed by their
# reference counts before a collection would look at them, so fewer survive to be walked by
# the older generations' collections. Under twenty sessions (benchmarks.load) a rerun's CPU
# time fell by about a thirtieth; cyclic garbage waits at most one young collection longer.
gc.set_threshold(7000, 10, 10)
