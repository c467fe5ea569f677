"""torch.nn.modules: the layers move in here, each into the file where PyTorch keeps it."""
