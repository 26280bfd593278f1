"""``madcluster serve``: an HTTP scoring service for a model file or a fleet folder.

FastAPI + uvicorn (the optional extra ``serve``: ``pip install "madcluster[serve]"``). Imported
only by the ``serve`` command, so ``import madcluster`` never pulls the server stack. Endpoints:

- ``GET /health``: status, models, open streams
- ``GET /models``: each model's columns, window, threshold and whether it can stream
- ``POST /models/{model}/score``: ``{"rows": [[...], ...], "columns": [...]?}`` -> scores, flags
- ``POST /streams/{stream}``: append rows to a stream (opened on first use), returns their scores
  and flags, and the steps whose scores became final (``final_steps``, ``final_scores``,
  ``final_flags``: with the default's KMeans term, the rows ``final_after_rows`` back, while a
  row's first score reads rows <= t only; see
  :mod:`madcluster.score.combination`); ``GET`` / ``DELETE /streams/{stream}``
- ``POST /models/{model}/refit``: ``{"rows": [...], "epochs"?, "from_scratch"?, "save"?, "wait"?}``
  refits the model on recent normal rows in a child process and swaps it in; its open streams go
  on with it (:mod:`madcluster.serve.swap`); ``GET`` the same path for the refit's state
- ``GET /metrics``: Prometheus text format (requests, latency, rows and flags per model)

Bad requests get a 4xx JSON ``{"error": "..."}`` naming the problem, never a traceback.
"""
