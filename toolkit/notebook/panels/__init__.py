"""The notebook's panels, one package each: ``model`` (the view-model: plain data, neither
ipywidgets nor plotly), ``html`` (its HTML, as strings) and ``widget`` (a thin ipywidgets
shell). :mod:`toolkit.notebook.build` builds them from their sources."""
