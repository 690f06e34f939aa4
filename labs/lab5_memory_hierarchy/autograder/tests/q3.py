OK_FORMAT = True

test = {   'name': 'q3',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> import torch\n'
                                               '>>> from gpuperf.grading import call, check_padding, check_tensor, padded\n'
                                               '>>> from gpuperf.runtime import DEVICE\n'
                                               '>>> for _n in [1, 300, 1000, 5000]:\n'
                                               '...     _x = padded(torch.randn(_n, generator=torch.Generator().manual_seed(_n)).to(DEVICE), 256)\n'
                                               '...     _out = padded(torch.zeros(_n, device=DEVICE), 256, fill=-31337.0)\n'
                                               '...     _want = _x.clone()\n'
                                               "...     call('_persistent_copy_kernel', lambda x=_x, out=_out, n=_n: _persistent_copy_kernel[4,](x, out, n, BLOCK_SIZE=128))\n"
                                               "...     check_padding(f'out (n={_n})', _out)\n"
                                               "...     check_tensor(f'persistent copy of {_n} elements by 4 programs', _out, _want, block=128)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q3', globals())\n", 'hidden': True, 'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q3_traffic', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
