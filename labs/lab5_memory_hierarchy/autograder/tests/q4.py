OK_FORMAT = True

test = {   'name': 'q4',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import memory\n'
                                               '>>> from gpuperf.grading import call, check_close, check_true, safe_repr\n'
                                               '>>> _sizes = np.array([4000.0, 64000.0, 1000000.0, 16000000.0, 256000000.0])\n'
                                               '>>> _times = memory.transfer_time(_sizes, 14200000000.0, 1.4e-06)\n'
                                               ">>> _fit = call('fit_latency_bandwidth', fit_latency_bandwidth, _sizes, _times)\n"
                                               ">>> check_true(isinstance(_fit, tuple) and len(_fit) == 2, f'fit_latency_bandwidth should return the tuple (latency_s, bandwidth), got "
                                               "{safe_repr(_fit)}')\n"
                                               ">>> check_close('latency_s', _fit[0], 1.4e-06, rtol=0.001, unit='s')\n"
                                               ">>> check_close('bandwidth', _fit[1], 14200000000.0, rtol=0.001, unit='B/s', hints={14200000000.0 ** (-2): 'the bandwidth is 1 / slope, not the "
                                               "slope'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {'code': ">>> from gpuperf.grading import run_hidden\n>>> run_hidden('q4', globals())\n", 'hidden': True, 'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
