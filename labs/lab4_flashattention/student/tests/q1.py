OK_FORMAT = True

test = {   'name': 'q1',
    'points': 4,
    'suites': [   {   'cases': [   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import attention\n'
                                               '>>> from gpuperf.grading import call, check_tensor, check_true\n'
                                               '>>> _x = np.array([[0.5, -1.0, 2.0, 3.5, 0.0, 7.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]])\n'
                                               '>>> _m_ref = _x.max(axis=1)\n'
                                               '>>> _l_ref = np.exp(_x - _x.max(axis=1)[:, None]).sum(axis=1)\n'
                                               '>>> _softmax_ref = attention.softmax(_x)\n'
                                               ">>> _stats = call('online_softmax_stats', online_softmax_stats, _x.copy(), 3)\n"
                                               ">>> check_true(isinstance(_stats, tuple) and len(_stats) == 2, 'online_softmax_stats should return a tuple (m, ell)')\n"
                                               ">>> check_tensor('m (the running max after the last block)', _stats[0], _m_ref)\n"
                                               ">>> check_tensor('ell (the running sum after the last block, block_size=3)', _stats[1], _l_ref, atol=0, rtol=1e-09)\n"
                                               ">>> check_tensor('online_softmax(x, 3)', call('online_softmax', online_softmax, _x.copy(), 3), _softmax_ref, atol=1e-09, rtol=1e-09)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
