project = 'memmut'
copyright = 'memmut developers'
extensions = []
master_doc = 'index'
exclude_patterns = []
html_theme = 'alabaster'
