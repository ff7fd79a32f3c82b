"""The book's site code: how results become pages.

* :mod:`.report` -- tables, claims and provenance lines for notebooks; :mod:`.scorecard` and :mod:`.papers` --
  every item of the four papers and its state; :mod:`.stored` -- runs kept in the package;
  :mod:`.sphinxext` -- the Sphinx extension; :mod:`.rerun` -- re-executing a chapter with other parameters;
  :mod:`.benchmark_report` -- the performance page; :mod:`.figures` -- how every notebook figure is drawn and shown
  (SVG fitted to the page, alt text, stacked panels on a phone); :mod:`.findings` -- each paper's "what we found"
  abstract; :mod:`.envinfo` -- the environment page;
* ``lvmrepro.book.<paper>.<topic>`` -- one presentation module per notebook: the tables, figures and readings a
  notebook shows, built from result files and tested.
"""
