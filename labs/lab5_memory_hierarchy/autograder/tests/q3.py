OK_FORMAT = True

test = {   'name': 'q3',
    'points': 3,
    'suites': [   {   'cases': [   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import memory\n'
                                               '>>> from gpuperf.grading import call, check_close, check_true\n'
                                               '>>> sizes = np.array([4000.0, 64000.0, 1000000.0, 16000000.0, 256000000.0])\n'
                                               '>>> times = memory.transfer_time(sizes, 14200000000.0, 1.4e-06)\n'
                                               ">>> fit = call('fit_latency_bandwidth', fit_latency_bandwidth, sizes, times)\n"
                                               ">>> check_true(isinstance(fit, tuple) and len(fit) == 2, f'fit_latency_bandwidth should return the tuple (latency_s, bandwidth), got {fit!r}')\n"
                                               ">>> check_close('latency_s', fit[0], 1.4e-06, rtol=0.001, unit='s')\n"
                                               ">>> check_close('bandwidth', fit[1], 14200000000.0, rtol=0.001, unit='B/s', hints={14200000000.0 ** (-2): 'the bandwidth is 1 / slope, not the "
                                               "slope'})\n",
                                       'hidden': False,
                                       'locked': False},
                                   {   'code': '>>> import numpy as np\n'
                                               '>>> from gpuperf import memory\n'
                                               '>>> from gpuperf.grading import call, check_close\n'
                                               '>>> sizes = np.geomspace(1000.0, 1000000000.0, 13)\n'
                                               '>>> times = memory.transfer_time(sizes, 900000000000.0, 5e-06) * (1 + 0.03 * np.sin(np.arange(13)))\n'
                                               '>>> ref = memory.fit_transfer_model(sizes, times)\n'
                                               ">>> fit = call('fit_latency_bandwidth', fit_latency_bandwidth, sizes, times)\n"
                                               ">>> check_close('latency_s (noisy check data)', fit[0], ref.latency_s, rtol=0.0001, unit='s')\n"
                                               ">>> check_close('bandwidth (noisy check data)', fit[1], ref.bandwidth, rtol=0.0001, unit='B/s')\n",
                                       'hidden': True,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
