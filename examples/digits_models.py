"""The digits models of examples/lenet5.mlir and examples/mlp.mlir, as
PyTorch modules: trained by examples/train_digits.py, timed with random
weights by bench/torch_model.py (bench/small_vs_torch.sh).

  LeNet5: N x 1 x 32 x 32 -> conv 1->6 5x5 -> relu -> maxpool 2 -> conv 6->16 5x5
          -> relu -> maxpool 2 -> flatten -> fc 400->120 -> relu -> fc 120->84
          -> relu -> fc 84->10
  MLP:    N x 1 x 28 x 28 -> flatten -> fc 784->200 -> relu -> fc 200->10
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 200)
        self.fc2 = nn.Linear(200, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))
