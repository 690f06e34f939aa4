OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> x = torch.linspace(-3, 3, 1000, device=DEVICE)\n'
                                               '>>> b = torch.linspace(1, -1, 1000, device=DEVICE)\n'
                                               ">>> check_tensor('axpb_relu(1.5, x, b)', call('axpb_relu', axpb_relu, 1.5, x, b, BLOCK_SIZE=256), torch.relu(1.5 * x + b), block=256)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
