"""Whiteboard versions: each family's answer in about ten lines of plain numpy.

One module per family (``rlviz.interview.whiteboard.<page slug>``). Each function is what a
candidate would write at a whiteboard (the update, the loss, the projection), with no
validation or batching; tests and a live check on the page show it gives the same numbers as
the library on random inputs and on the current view.
"""
