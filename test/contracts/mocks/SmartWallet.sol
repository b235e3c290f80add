// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// Test-only ERC-1271 smart wallet: accepts hashes signed by its owner key, executes calls for the owner.
contract SmartWallet is IERC1271 {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    receive() external payable {}

    function execute(address target, bytes calldata data) external {
        require(msg.sender == owner, "not owner");
        Address.functionCall(target, data);
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address recovered, ECDSA.RecoverError err,) = ECDSA.tryRecoverCalldata(hash, signature);
        return err == ECDSA.RecoverError.NoError && recovered == owner ? this.isValidSignature.selector : bytes4(0xffffffff);
    }
}

/// Test-only payee that, when paid ether, calls back into the HTLC with `callback` (e.g. a second
/// redeem or refund of the same order) and records whether that nested call succeeded.
contract Reenterer {
    address public target;
    bytes public callback;
    bool public reentered;
    uint256 public calls;

    function arm(address target_, bytes calldata callback_) external {
        target = target_;
        callback = callback_;
    }

    receive() external payable {
        calls += 1;
        if (calls > 1) return;
        (bool ok,) = target.call(callback);
        reentered = ok;
    }
}
