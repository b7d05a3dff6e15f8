"""WSGI entry points (module paths for uwsgi, gunicorn, mod_wsgi)."""
