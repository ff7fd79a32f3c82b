"""Synthetic mixture-regression data (convex mixture regression's synthetic study): :mod:`.synthetic`."""
