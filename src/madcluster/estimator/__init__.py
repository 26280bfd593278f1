"""The MADCluster estimator and what serves it: fitting the network, scoring, streaming, model
files, ONNX export and per-channel attribution. ``from madcluster import MADCluster`` is the
public way in."""
