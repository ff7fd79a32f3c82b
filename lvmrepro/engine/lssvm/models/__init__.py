"""Concrete latent SSVM models (oracles): enumerable states, ragged positions, the mammals and digit
models of the chapters, and a latent chain (Viterbi completion) that proves the interface general."""
