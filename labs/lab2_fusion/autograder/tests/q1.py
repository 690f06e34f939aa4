OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> x = torch.linspace(-3, 3, 1000, device=DEVICE)\n'
                                               '>>> b = torch.linspace(1, -1, 1000, device=DEVICE)\n'
                                               ">>> check_tensor('axpb_relu(1.5, x, b)', call('axpb_relu', axpb_relu, 1.5, x, b, BLOCK_SIZE=256), torch.relu(1.5 * x + b), block=256)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> gen = torch.Generator().manual_seed(0)\n'
                                               '>>> for n, block in [(1, 16), (3000, 1024), (4096, 512)]:\n'
                                               '...     x = torch.randn(n, generator=gen).to(DEVICE)\n'
                                               '...     b = torch.randn(n, generator=gen).to(DEVICE)\n'
                                               "...     check_tensor(f'axpb_relu(-0.7, x, b) with n={n}', call('axpb_relu', axpb_relu, -0.7, x, b, BLOCK_SIZE=block), torch.relu(-0.7 * x + b), "
                                               'block=block)\n',
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
