"""The apps' servers: standard library only, run inside the apps env's namespaces.

This package is imported twice, in two roles:

* inside an apps env's namespaces, as the top-level package ``appserver`` (``python -I -S -c``
  with this directory's parent on ``sys.path``; :mod:`.supervisor` is the entry point): the
  supervisor binds one listening socket per app, forks one threaded HTTP server process per
  app (:mod:`.server`), then starts Chromium and reaps its children;
* in the controller, as ``adaroll.envs.apps.appserver``, for the apps' schemas (task seeding is
  validated against them) and their names and ports.

Hence relative imports only, and nothing outside the standard library: the servers run with the
system's Python as the browser's unprivileged account, which cannot read the project's virtual
environment.
"""
