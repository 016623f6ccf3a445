"""Recipes for serving rlviz beyond one process."""
