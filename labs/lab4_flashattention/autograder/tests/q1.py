OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import attention\n'
                                               '>>> from gpuperf.grading import call, check_tensor, check_true\n'
                                               '>>> x = np.array([[0.5, -1.0, 2.0, 3.5, 0.0, 7.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]])\n'
                                               ">>> stats = call('online_softmax_stats', online_softmax_stats, x, 3)\n"
                                               ">>> check_true(isinstance(stats, tuple) and len(stats) == 2, f'online_softmax_stats should return a tuple (m, ell), got {type(stats).__name__}')\n"
                                               ">>> check_tensor('m (the running max after the last block)', stats[0], x.max(axis=1))\n"
                                               '>>> m_ref = x.max(axis=1)\n'
                                               '>>> l_ref = np.exp(x - m_ref[:, None]).sum(axis=1)\n'
                                               ">>> check_true(np.allclose(np.asarray(stats[1], dtype=float), l_ref, rtol=1e-09), f'ell = {np.round(np.asarray(stats[1], dtype=float), 4).tolist()}, "
                                               'expected {np.round(l_ref, 4).tolist()} (block_size=3): when a block raises the max, multiply the old sum by exp(m - m_new) before adding exp(block - '
                                               "m_new)')\n"
                                               ">>> check_tensor('online_softmax(x, 3)', call('online_softmax', online_softmax, x, 3), attention.softmax(x), atol=1e-09, rtol=1e-09)\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import attention\n'
                                               '>>> from gpuperf.grading import call, check_tensor\n'
                                               '>>> rng = np.random.default_rng(4)\n'
                                               '>>> x = np.concatenate([rng.normal(0, 3, (3, 50)), rng.choice([-10000.0, 10000.0], size=(2, 50)) + rng.normal(0, 1, (2, 50)), np.linspace(-10000.0, '
                                               '10000.0, 50)[None, :]])\n'
                                               '>>> for block_size in (1, 7, 16, 64):\n'
                                               "...     check_tensor(f'online_softmax(x, {block_size}) (scores up to ±1e4)', call('online_softmax', online_softmax, x, block_size), "
                                               'attention.softmax(x), atol=1e-09, rtol=1e-07)\n'
                                               "...     m, ell = call('online_softmax_stats', online_softmax_stats, x, block_size)\n"
                                               "...     check_tensor(f'ell (block_size={block_size})', ell, np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1), atol=1e-09, rtol=1e-09)\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
