OK_FORMAT = True

test = {   'name': 'q4',
    'points': 2,
    'suites': [   {   'cases': [   {   'code': '>>> from gpuperf import recompute\n'
                                               '>>> from gpuperf.grading import answered, call, check_close\n'
                                               ">>> _ref = recompute.layer_activations(2048, 4, 4096, 32, mode='none').activation_bytes\n"
                                               '>>> check_close("layer_activation_bytes(2048, 4, 4096, 32, \'none\')", call(\'layer_activation_bytes\', layer_activation_bytes, 2048, 4, 4096, 32, '
                                               "'none'), _ref, unit='B', hints={34 / 114: 'count the attention scores too: a·s² values per sequence', 132 / 114: 'a dropout mask takes 1 byte per "
                                               "element, not 2'})\n"
                                               ">>> _ = answered('cheapest_mode', cheapest_mode)\n",
                                       'hidden': False,
                                       'locked': False}],
                      'scored': True,
                      'setup': '',
                      'teardown': '',
                      'type': 'doctest'}]}
