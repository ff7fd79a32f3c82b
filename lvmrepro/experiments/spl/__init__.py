"""Self-paced learning chapter (Kumar, Packer & Koller, NIPS 2010): :mod:`.digits` (Figure 3),
:mod:`.mammals` (Table 2, Figure 4)."""
