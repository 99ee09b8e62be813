"""The deployment as code: an AWS CDK app that declares each environment's runtime.

`make synth ENV=staging` writes its CloudFormation templates offline;
`make deploy ENV=staging` checks the settings and credentials, then deploys.
"""
