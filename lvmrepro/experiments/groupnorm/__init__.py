"""Group-norm chapter (Chen, Batra & Freeman, ICCV 2013): :mod:`.digits` (Figure 2, Tables 1-2)."""
